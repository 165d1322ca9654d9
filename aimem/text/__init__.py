"""Text rules every layer shares: keyword terms, Porter stems, third-person restatements."""
