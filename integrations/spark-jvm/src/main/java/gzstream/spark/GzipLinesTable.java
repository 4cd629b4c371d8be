package gzstream.spark;

import java.util.Set;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The lines of the files one read names, readable in batch only. Immutable. */
final class GzipLinesTable implements SupportsRead {
    private final ReadOptions options;

    GzipLinesTable(ReadOptions options) {
        this.options = options;
    }

    @Override
    public String name() {
        return GzipLinesSource.NAME + " " + String.join(", ", options.paths());
    }

    @Override
    public Column[] columns() {
        return new Column[] {Column.create("value", DataTypes.StringType)};
    }

    /** Spark 4 asks for columns(); older callers of schema() get the same single column. */
    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
        return GzipLinesSource.SCHEMA;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap ignored) {
        // The options are those getTable was given, already checked.
        return () -> new GzipLinesScan(options);
    }
}
