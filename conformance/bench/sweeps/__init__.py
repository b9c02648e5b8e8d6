"""bench/sweeps"""
