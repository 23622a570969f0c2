"""Operations: the `vitrine` command line, dev supervisor, simulators and benchmarks."""
