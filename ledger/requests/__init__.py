"""Typed requests: one frozen object per command family, built once at the click layer.

Every layer below the command reads named attributes instead of a raw option dict, so a
misspelt option is an attribute error a type checker sees, and a signature shows which options
a function really uses.
"""
