"""Reports over the read models: compare, diff, the run summary and the HTML report."""
