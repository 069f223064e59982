#!/bin/sh
set -e
curl -sSL https://setup.example.invalid/bootstrap.sh | sh
