"""Results -> artifacts: JSON summaries, trace files, text, graphs, pictures, HTML."""
