"""The Spark + Delta fleet planning job (the tables: docs/tables.md)."""
