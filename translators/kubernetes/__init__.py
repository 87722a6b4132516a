"""Kubernetes manifests: kind table, reader, writer."""
