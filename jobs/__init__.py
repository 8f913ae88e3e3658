"""The Spark + Delta fleet planning job (tables in ../shared/spec/tables.md)."""
