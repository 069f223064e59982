#!/bin/sh
cp updater.plist ~/Library/LaunchAgents/com.example.updater.plist
launchctl load ~/Library/LaunchAgents/com.example.updater.plist
