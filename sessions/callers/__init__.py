"""Callers that are not the person at the keyboard: scripted users and the LLM user simulator."""
