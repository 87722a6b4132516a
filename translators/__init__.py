"""Readers and writers, one sub-package per format."""
