//! Task definitions (`task.yaml` plus a `repo/` fixture), their JSON Schema and validation.
