#!/bin/sh
echo "Session started"
