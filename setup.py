"""Kept for tools that still call ``setup.py`` directly; the metadata is in pyproject.toml."""

from setuptools import setup

setup()
