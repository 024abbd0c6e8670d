"""Import customer spreadsheets exported as CSV."""
