"""FastStream workers on the Redis streams of the FalkorDB server: writer, retraction, reaper."""
