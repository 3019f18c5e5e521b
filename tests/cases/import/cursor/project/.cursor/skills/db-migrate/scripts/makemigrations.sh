#!/bin/sh
cd backend && uv run python manage.py makemigrations --check --dry-run
