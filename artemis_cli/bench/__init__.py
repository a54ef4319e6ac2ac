"""``artemis bench`` (SPEC §12): a frozen long-task suite run in every memory mode side by side.

    from artemis_cli.bench.runner import BenchConfig, run_bench
    results = run_bench(BenchConfig(suite=Path("tasks/bench"), out=Path("results.json")))
"""
