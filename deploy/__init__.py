"""Deployment descriptions (Kubernetes manifests live beside this file as YAML)."""
