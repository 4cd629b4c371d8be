package gzstream.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;

/**
 * Sent to the executors with the tasks: makes the reader of one split there, resolving the
 * gzstream executable on that machine and its thread count in that task. Immutable and
 * serializable.
 */
final class WholeLinesReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    /** The {@code gzstream} option as given, or {@code null}. */
    private final String gzstreamOption;

    /** The {@code threads} option, or {@code null} for the task's cores. */
    private final Integer threadsOption;

    WholeLinesReaderFactory(String gzstreamOption, Integer threadsOption) {
        this.gzstreamOption = gzstreamOption;
        this.threadsOption = threadsOption;
    }

    /**
     * Starts gzstream for the split, on the threads {@link Gzstream#taskThreads} gives (called
     * in the task's thread, where Spark's {@code TaskContext} is set); the reader owns the child
     * from here on.
     */
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return new WholeLinesReader(Gzstream.resolveBinary(gzstreamOption), (GzipSplit) partition,
            Gzstream.taskThreads(threadsOption));
    }
}
