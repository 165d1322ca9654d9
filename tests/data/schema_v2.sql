CREATE TABLE memories (
	seq INTEGER NOT NULL, 
	id VARCHAR(36) NOT NULL, 
	namespace VARCHAR(64) NOT NULL, 
	content TEXT NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	cjk_terms TEXT DEFAULT '' NOT NULL, 
	interpreted_content TEXT NOT NULL, 
	emotional_impact FLOAT, 
	user_relevance FLOAT, 
	novelty FLOAT, 
	utility FLOAT, 
	priority_score FLOAT, 
	rationale VARCHAR NOT NULL, 
	user_context VARCHAR, 
	score_source VARCHAR NOT NULL, 
	model VARCHAR, 
	prompt_version VARCHAR, 
	prompt_tokens INTEGER NOT NULL, 
	completion_tokens INTEGER NOT NULL, 
	judge_latency_ms FLOAT NOT NULL, 
	judge_retries INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	last_accessed_at DATETIME NOT NULL, 
	access_count INTEGER NOT NULL, 
	pinned BOOLEAN NOT NULL, 
	version INTEGER NOT NULL, 
	archived_at DATETIME, 
	archive_reason VARCHAR, 
	PRIMARY KEY (seq), 
	UNIQUE (id)
);
CREATE INDEX ix_memories_capacity ON memories (namespace, archived_at, pinned, priority_score, created_at, id);
CREATE INDEX ix_memories_recent ON memories (namespace, archived_at, created_at);
CREATE INDEX ix_memories_hash ON memories (namespace, content_hash);
CREATE TABLE memory_history (
	id INTEGER NOT NULL, 
	memory_id VARCHAR(36) NOT NULL, 
	namespace VARCHAR(64) NOT NULL, 
	event VARCHAR NOT NULL, 
	version INTEGER NOT NULL, 
	at DATETIME NOT NULL, 
	detail VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
CREATE INDEX ix_history_memory ON memory_history (memory_id, id);
CREATE TABLE idempotency_keys (
	namespace VARCHAR(64) NOT NULL, 
	"key" VARCHAR(200) NOT NULL, 
	memory_id VARCHAR(36) NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (namespace, "key")
);
CREATE INDEX ix_idempotency_keys_memory_id ON idempotency_keys (memory_id);
CREATE TABLE core (
	namespace VARCHAR NOT NULL, 
	text VARCHAR NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (namespace)
);
CREATE TABLE namespace_counts (
	namespace VARCHAR NOT NULL, 
	capped INTEGER NOT NULL, 
	PRIMARY KEY (namespace)
);
CREATE TABLE memory_vectors (
	seq INTEGER NOT NULL, 
	model VARCHAR NOT NULL, 
	dim INTEGER NOT NULL, 
	vector BLOB NOT NULL, 
	PRIMARY KEY (seq)
);
CREATE TABLE aimem_meta (
	"key" VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	PRIMARY KEY ("key")
);
CREATE VIRTUAL TABLE memories_fts USING fts5(content, interpreted_content, cjk_terms, content='memories', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE memories_active_fts USING fts5(content, interpreted_content, cjk_terms, content='memories', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content, interpreted_content, cjk_terms) SELECT new.seq, new.content, new.interpreted_content, new.cjk_terms ;
        INSERT INTO memories_active_fts(rowid, content, interpreted_content, cjk_terms) SELECT new.seq, new.content, new.interpreted_content, new.cjk_terms WHERE new.archived_at IS NULL; END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, interpreted_content, cjk_terms) SELECT 'delete', old.seq, old.content, old.interpreted_content, old.cjk_terms ;
        INSERT INTO memories_active_fts(memories_active_fts, rowid, content, interpreted_content, cjk_terms) SELECT 'delete', old.seq, old.content, old.interpreted_content, old.cjk_terms WHERE old.archived_at IS NULL; END;
CREATE TRIGGER memories_fts_au
        AFTER UPDATE OF content, interpreted_content, cjk_terms ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, interpreted_content, cjk_terms) SELECT 'delete', old.seq, old.content, old.interpreted_content, old.cjk_terms ;
        INSERT INTO memories_fts(rowid, content, interpreted_content, cjk_terms) SELECT new.seq, new.content, new.interpreted_content, new.cjk_terms ; END;
CREATE TRIGGER memories_active_fts_au
        AFTER UPDATE OF content, interpreted_content, cjk_terms, archived_at ON memories BEGIN
        INSERT INTO memories_active_fts(memories_active_fts, rowid, content, interpreted_content, cjk_terms) SELECT 'delete', old.seq, old.content, old.interpreted_content, old.cjk_terms WHERE old.archived_at IS NULL;
        INSERT INTO memories_active_fts(rowid, content, interpreted_content, cjk_terms) SELECT new.seq, new.content, new.interpreted_content, new.cjk_terms WHERE new.archived_at IS NULL; END;
CREATE TRIGGER memories_count_ai AFTER INSERT ON memories
        WHEN new.archived_at IS NULL AND NOT new.pinned AND new.priority_score IS NOT NULL
        BEGIN INSERT INTO namespace_counts(namespace, capped) VALUES (new.namespace, 1)
        ON CONFLICT(namespace) DO UPDATE SET capped = capped + 1; END;
CREATE TRIGGER memories_count_ad AFTER DELETE ON memories
        WHEN old.archived_at IS NULL AND NOT old.pinned AND old.priority_score IS NOT NULL
        BEGIN UPDATE namespace_counts SET capped = capped - 1
        WHERE namespace = old.namespace; END;
CREATE TRIGGER memories_count_au AFTER UPDATE OF
        archived_at, pinned, priority_score, namespace ON memories BEGIN
        UPDATE namespace_counts SET capped = capped - 1 WHERE namespace = old.namespace
          AND old.archived_at IS NULL AND NOT old.pinned AND old.priority_score IS NOT NULL;
        INSERT INTO namespace_counts(namespace, capped)
          SELECT new.namespace, 1 WHERE new.archived_at IS NULL AND NOT new.pinned
            AND new.priority_score IS NOT NULL
          ON CONFLICT(namespace) DO UPDATE SET capped = capped + 1; END;
CREATE TRIGGER memories_vector_ad AFTER DELETE ON memories BEGIN
        DELETE FROM memory_vectors WHERE seq = old.seq; END;
CREATE TRIGGER memories_keys_ad AFTER DELETE ON memories BEGIN
        DELETE FROM idempotency_keys WHERE memory_id = old.id; END;
CREATE TRIGGER memory_history_no_update BEFORE UPDATE ON memory_history
        BEGIN SELECT RAISE(ABORT, 'memory_history is append-only'); END;
CREATE TRIGGER memory_history_no_delete BEFORE DELETE ON memory_history
        BEGIN SELECT RAISE(ABORT, 'memory_history is append-only'); END;
