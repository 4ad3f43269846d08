package main

import "regexp"

// A --db in libpq's keyword/value form ("host=db1 dbname=plant user=lp") names a PostgreSQL
// database as a postgres:// URL does: taken for a file name, it would become an outbox file of
// that name, and its password would be echoed in the "does not exist" message.
var (
	keywordDSN      = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|connect_timeout)\s*=`)
	keywordPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)
)

// isKeywordDSN reports whether db is a keyword/value connection string.
func isKeywordDSN(db string) bool { return keywordDSN.MatchString(db) }

// redactKeywordDSN is db with its password masked.
func redactKeywordDSN(db string) string {
	return keywordPassword.ReplaceAllString(db, "password=xxxxx")
}
