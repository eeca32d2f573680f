"""Text rendering and export: transcripts, sessions and cards as text, JSON and Markdown."""
