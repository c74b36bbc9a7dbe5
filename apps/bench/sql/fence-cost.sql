-- What the fenced append's checks cost inside the server (issue 30, "a cheaper fence").
-- Six INSERTs of one step record, each in its own transaction with its commit, alternating
-- statement by statement, so load and fsync drift hit every kind alike:
--   bare      the bench's baseline (a text key, ON CONFLICT DO NOTHING)
--   raw       the store's row with no checks
--   pred      + the predecessor check
--   nolock    + the lease checked without a lock (not safe: the reason the lock exists)
--   share     + the lease locked FOR SHARE (the store's fenced append)
--   keyshare  + the lease locked FOR KEY SHARE
-- Run (in a scratch database; it creates and drops schema fence_cost):
--   psql -f apps/bench/sql/fence-cost.sql
-- Prints each kind's median and quartiles in µs (statement and commit, clock_timestamp()).
DROP SCHEMA IF EXISTS fence_cost CASCADE;
CREATE SCHEMA fence_cost;
CREATE TABLE fence_cost.e (log_id text COLLATE "C", seq bigint, record text NOT NULL, PRIMARY KEY (log_id, seq));
CREATE TABLE fence_cost.l (log_id text COLLATE "C" PRIMARY KEY, owner text NOT NULL, fence bigint NOT NULL, expires_at bigint NOT NULL, holder int);
CREATE TABLE fence_cost.bare (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
CREATE TABLE fence_cost.t (variant text, us float8);
CREATE PROCEDURE fence_cost.run(n int) LANGUAGE plpgsql AS $$
DECLARE
  vs text[] := ARRAY['bare','raw','pred','nolock','share','keyshare'];
  tag text := md5(random()::text);
  rec text := '{"type":"harness.step","toolCallId":"call_abcdefghij0123456789","name":"step:1","value":{"chargeId":"ch_3PqK8s2eZvKYlo2C1a2b3c4d","amount":4200,"currency":"eur"}}';
  t0 timestamptz; d float8; v text; id text; k int;
BEGIN
  FOREACH v IN ARRAY vs LOOP INSERT INTO fence_cost.l VALUES (v || tag, 'host', 42, 9e15, NULL); END LOOP;
  COMMIT;
  FOR i IN 1..n LOOP
    FOR j IN 1..array_length(vs, 1) LOOP
      v := vs[1 + (j + i) % array_length(vs, 1)];
      id := v || tag;
      t0 := clock_timestamp();
      IF v = 'bare' THEN
        INSERT INTO fence_cost.bare VALUES (id || ':' || i, rec) ON CONFLICT DO NOTHING;
      ELSIF v = 'raw' THEN
        INSERT INTO fence_cost.e VALUES (id, i, rec);
      ELSIF v = 'pred' THEN
        INSERT INTO fence_cost.e SELECT id, i, rec WHERE (i = 1 OR EXISTS (SELECT 1 FROM fence_cost.e p WHERE p.log_id = id AND p.seq = i - 1));
      ELSIF v = 'nolock' THEN
        INSERT INTO fence_cost.e SELECT id, i, rec WHERE EXISTS (SELECT 1 FROM fence_cost.l l WHERE l.log_id = id AND l.owner = 'host' AND l.fence = 42)
          AND (i = 1 OR EXISTS (SELECT 1 FROM fence_cost.e p WHERE p.log_id = id AND p.seq = i - 1));
      ELSIF v = 'share' THEN
        INSERT INTO fence_cost.e SELECT id, i, rec WHERE EXISTS (SELECT 1 FROM fence_cost.l l WHERE l.log_id = id AND l.owner = 'host' AND l.fence = 42 FOR SHARE)
          AND (i = 1 OR EXISTS (SELECT 1 FROM fence_cost.e p WHERE p.log_id = id AND p.seq = i - 1));
      ELSIF v = 'keyshare' THEN
        INSERT INTO fence_cost.e SELECT id, i, rec WHERE EXISTS (SELECT 1 FROM fence_cost.l l WHERE l.log_id = id AND l.owner = 'host' AND l.fence = 42 FOR KEY SHARE)
          AND (i = 1 OR EXISTS (SELECT 1 FROM fence_cost.e p WHERE p.log_id = id AND p.seq = i - 1));
      END IF;
      GET DIAGNOSTICS k = ROW_COUNT;
      IF k <> 1 THEN RAISE 'no row at %', i; END IF;
      COMMIT;
      d := extract(epoch FROM clock_timestamp() - t0) * 1e6;
      INSERT INTO fence_cost.t VALUES (v, d);  -- commits with the next statement: the same extra work for every kind
    END LOOP;
  END LOOP;
  COMMIT;
END $$;
CALL fence_cost.run(4000);
SELECT variant, count(*) AS n,
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY us)::numeric, 1) AS median_us,
  round(percentile_cont(0.25) WITHIN GROUP (ORDER BY us)::numeric, 1) AS p25_us,
  round(percentile_cont(0.75) WITHIN GROUP (ORDER BY us)::numeric, 1) AS p75_us
FROM fence_cost.t GROUP BY variant ORDER BY median_us;
DROP SCHEMA fence_cost CASCADE;
