"""Screens of the cutin app."""
