"""What every layer of the write side stands on: errors, time, JSON text, bounded input, the
public-safety filter."""
