"""The core values: errors, keys, arguments, messages, transcripts and the pairing rule."""
