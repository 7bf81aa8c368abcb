-- Keep tool vectors inline in the heap. A 512-d vector is 2 KB, just over the TOAST threshold, so
-- PostgreSQL stored every vector out of line: the exact scan of the vector leg then paid a TOAST
-- index lookup and fetch per vector (measured in PGlite: 10,600 vectors, max cosine 260 ms out of
-- line, 17 ms inline). MAIN storage with a page-sized tuple target keeps vectors up to ~2,000
-- dimensions inline and uncompressed; larger ones still fall back to TOAST.
ALTER TABLE tool_embeddings SET (toast_tuple_target = 8160);
ALTER TABLE tool_embeddings ALTER COLUMN embedding SET STORAGE MAIN;
-- Changing the storage does not move stored values: rewrite them (a new datum is stored inline).
UPDATE tool_embeddings SET embedding = embedding::text::vector;
