-- What a reader who is not an admin may see is the union of two disjoint sets, each read through
-- its own index: the public groups (empty gbac_read), in name order from a partial index, and the
-- groups of one's own groups, from a GIN index on gbac_read. A page merges the two in name order.
CREATE INDEX component_groups_public_name ON component_groups (name) WHERE cardinality(gbac_read) = 0;
CREATE INDEX component_groups_gbac_read ON component_groups USING gin (gbac_read) WITH (fastupdate = off);
