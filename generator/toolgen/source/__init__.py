"""The source stage: loading YAML and JSON with positions, schema dialects, meta-schema checks, $ref resolution."""
