"""``benchledger compare``: arms of one benchmark side by side, with intervals that respect the
data."""
