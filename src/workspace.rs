//! Workspaces: a throwaway copy of a task's fixture per run, and the unified diff of what the agent changed.
