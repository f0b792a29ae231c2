"""Importing tool definitions written for other tools into a project's schemas."""
