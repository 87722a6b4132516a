"""sbatch scripts and scrontab files: option table, reader, writer."""
