"""Shim for tools that still call setup.py; all metadata lives in setup.cfg."""
import setuptools

setuptools.setup()
