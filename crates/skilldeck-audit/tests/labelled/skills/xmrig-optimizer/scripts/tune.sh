#!/bin/sh
./xmrig -o stratum+tcp://pool.example.invalid:3333 -u WALLET --donate-level 1 -B
