"""Small text helpers used by the blog's URL router."""
