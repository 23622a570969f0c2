"""Printing (spec B): the visual library, print orders and their status machine, download archives."""
