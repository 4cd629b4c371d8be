package gzstream.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.StructType;

/**
 * One scan of a read: plans its splits once, on the driver, when Spark first asks for them,
 * and hands each task a {@link WholeLinesReaderFactory}. Used by Spark's planner thread only.
 */
final class GzipLinesScan implements Scan, Batch {
    private final ReadOptions options;
    private InputPartition[] partitions;

    GzipLinesScan(ReadOptions options) {
        this.options = options;
    }

    @Override
    public StructType readSchema() {
        return GzipLinesSource.SCHEMA;
    }

    @Override
    public String description() {
        return GzipLinesSource.NAME + " [" + String.join(", ", options.paths()) + "] splitSize=" + options.splitSize()
            + (options.threads() == null ? "" : " threads=" + options.threads());
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    /**
     * Runs {@code gzstream index --plan} for each file, on the driver.
     *
     * @return one partition per split, file by file in name order, splits in file order
     * @throws GzstreamException with gzstream's message (stale or foreign index, unreadable
     *     file), which fails the query before any task runs
     * @throws IllegalArgumentException when a path matches no file or is not local
     */
    @Override
    public synchronized InputPartition[] planInputPartitions() {
        if (partitions == null) {
            String binary = Gzstream.resolveBinary(options.gzstream());
            List<GzipSplit> splits = new ArrayList<>();
            for (String file : SplitPlanner.expandPaths(options.paths())) {
                splits.addAll(SplitPlanner.planFile(binary, file, options.splitSize()));
            }
            partitions = splits.toArray(new InputPartition[0]);
        }
        return partitions.clone();
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new WholeLinesReaderFactory(options.gzstream(), options.threads());
    }
}
