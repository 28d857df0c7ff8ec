"""The example task's hidden driver imports ``observe`` and ``solution``, which exist only in a sandbox."""

collect_ignore = ["example_task"]
