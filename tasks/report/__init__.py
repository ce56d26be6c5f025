"""The run report: conclusions from the warehouse as one HTML file, a Markdown and a JSON summary, and JUnit XML.

Everything printed comes from the warehouse (marts and `sql/reports/` queries); this package only lays
it out. Heavy imports (matplotlib, scipy) happen inside the functions that need them.
"""
