package builtinschemas

// SchemasOnly is schemasOnly, for the test against the API server.
var SchemasOnly = schemasOnly
