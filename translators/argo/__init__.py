"""Argo Workflows: field table, depends expressions, reader, chain writer, schemas."""
