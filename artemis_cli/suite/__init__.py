"""``artemis test``: suites of task cases across devices, results as JUnit XML and JSON."""
