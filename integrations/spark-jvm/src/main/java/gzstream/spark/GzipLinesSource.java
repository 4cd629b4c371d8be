package gzstream.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code gzidx-jvm} format: text lines of gzip files, each file split across tasks through
 * the GZIDX index {@code gzstream index} writes beside it. A Spark DataSource V2 source, found
 * by its short name through {@code META-INF/services} once the jar is on Spark's class path
 * ({@code --jars}, {@code spark.jars}):
 *
 * <pre>{@code
 * spark.read.format("gzidx-jvm").option("splitSize", "128m").load("logs/*.gz")
 * }</pre>
 *
 * <p>gives {@code DataFrame[value: string]}, one row per line, as {@code spark.read.text} does;
 * the same options, splits and line rule as the Python source {@code gzidx}
 * (integrations/pyspark), with the lines cut in the JVM instead of in Python. Options:
 *
 * <ul>
 *   <li>{@code path} (what {@code load} is given; several paths are accepted): a file, a glob or a
 *       directory (its {@code *.gz}); {@code file:} URLs. Every machine must see the files at
 *       this path.
 *   <li>{@code splitSize}: plain (uncompressed) bytes per task, about; {@code 128m} by default.
 *   <li>{@code gzstream}: the executable, resolved on each machine; by default {@code $GZSTREAM}
 *       there, else {@code gzstream} on its PATH.
 * </ul>
 *
 * <p>Spark makes one instance per lookup; it holds nothing.
 */
public final class GzipLinesSource implements TableProvider, DataSourceRegister {
    /** The short name, {@code format("gzidx-jvm")}: the Python source keeps {@code gzidx}. */
    public static final String NAME = "gzidx-jvm";

    /** The one column, as {@code spark.read.text} has it. */
    static final StructType SCHEMA = new StructType().add("value", DataTypes.StringType);

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SCHEMA;
    }

    /**
     * Checks the options (a path is given, splitSize is a size) when {@code load} is called;
     * the files are listed and planned later, when the query is planned.
     */
    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new GzipLinesTable(ReadOptions.of(new CaseInsensitiveStringMap(properties)));
    }
}
