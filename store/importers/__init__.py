"""Importers: one reader per agent file format (domain), and the walk that feeds a store."""
