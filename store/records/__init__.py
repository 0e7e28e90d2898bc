"""Row records: messages to row values and back, and the decoded text the search index holds."""
