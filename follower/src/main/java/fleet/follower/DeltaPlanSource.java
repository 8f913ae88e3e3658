package fleet.follower;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.OptionalLong;

import org.apache.hadoop.conf.Configuration;

import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.data.ArrayValue;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.expressions.And;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.types.ArrayType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.MapType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;

/**
 * The fleet job's Delta output tables at {@code fleet.assignor.plan.path}, read with Delta Kernel (no Spark).
 *
 * <p>Every read of {@code assignment_results}, {@code assignments} and {@code client_assignments} carries the
 * predicate {@code run_id = R AND app_id = A}: Kernel prunes to the one run_id partition and skips files by
 * their app_id statistics; the rows left are filtered on app_id here. {@code runs} (one row per run) is read
 * whole. With {@code fleet.assignor.input.path} the inputs' collection time is {@code applications.snapshot_at_ms}
 * of the application at the version the run read (what {@code collect} writes), else that version's commit time.
 */
public class DeltaPlanSource implements PlanSource, PlanTables {

    private String planPath;
    private String inputPath;
    private Engine engine;
    private PlanReader reader;

    public DeltaPlanSource() {
    }

    /** For tests and embedding: a source on {@code planPath} (and optionally {@code inputPath}). */
    public DeltaPlanSource(String planPath, String inputPath) {
        init(planPath, inputPath, new Configuration());
    }

    @Override
    public void configure(Map<String, ?> configs) {
        String path = FollowerConfig.string(configs, FollowerConfig.PLAN_PATH, null);
        if (path == null) {
            throw new IllegalArgumentException(FollowerConfig.PLAN_PATH + " is not set");
        }
        Configuration hadoop = new Configuration();
        configs.forEach((key, value) -> {
            if (key.startsWith(FollowerConfig.HADOOP_PREFIX) && value != null) {
                hadoop.set(key.substring(FollowerConfig.HADOOP_PREFIX.length()), value.toString());
            }
        });
        init(path, FollowerConfig.string(configs, FollowerConfig.INPUT_PATH, null), hadoop);
    }

    private void init(String planPath, String inputPath, Configuration hadoop) {
        this.planPath = strip(planPath);
        this.inputPath = inputPath == null ? null : strip(inputPath);
        this.engine = DefaultEngine.create(hadoop);
        this.reader = new PlanReader(this);
    }

    private static String strip(String path) {
        return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    }

    @Override
    public Optional<Plan> latestPlan(String appId) throws Exception {
        return reader.latestPlan(appId);
    }

    @Override
    public String describe() {
        return planPath;
    }

    @Override
    public List<Map<String, Object>> rows(String table, String runId, String appId, List<String> columns)
            throws IOException {
        Snapshot snapshot = Table.forPath(engine, planPath + "/" + table).getLatestSnapshot(engine);
        return read(snapshot, runId, appId, columns);
    }

    @Override
    public OptionalLong inputsAt(String appId, Map<String, Long> inputVersions) throws IOException {
        if (inputPath == null) {
            return OptionalLong.empty();
        }
        Long version = inputVersions.get("applications");
        if (version != null) {
            Snapshot snapshot = Table.forPath(engine, inputPath + "/applications").getSnapshotAsOfVersion(engine, version);
            if (snapshot.getSchema().fieldNames().contains("snapshot_at_ms")) {
                for (Map<String, Object> row : read(snapshot, null, appId, List.of("app_id", "snapshot_at_ms"))) {
                    if (row.get("snapshot_at_ms") != null) {
                        return OptionalLong.of((Long) row.get("snapshot_at_ms"));
                    }
                }
            }
        }
        Long subscriptions = inputVersions.get("client_subscriptions");
        if (subscriptions == null) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Table.forPath(engine, inputPath + "/client_subscriptions")
            .getSnapshotAsOfVersion(engine, subscriptions).getTimestamp(engine));
    }

    private List<Map<String, Object>> read(Snapshot snapshot, String runId, String appId, List<String> columns)
            throws IOException {
        StructType schema = snapshot.getSchema();
        StructType readSchema = new StructType();
        for (String name : columns) {
            if (schema.indexOf(name) < 0) {
                throw new IllegalStateException("column " + name + " missing from " + schema.fieldNames());
            }
            readSchema = readSchema.add(schema.get(name));
        }
        Predicate filter = null;
        if (runId != null) {
            filter = new Predicate("=", new Column("run_id"), Literal.ofString(runId));
        }
        if (appId != null) {
            Predicate app = new Predicate("=", new Column("app_id"), Literal.ofString(appId));
            filter = filter == null ? app : new And(filter, app);
        }
        var builder = snapshot.getScanBuilder().withReadSchema(readSchema);
        if (filter != null) {
            builder = builder.withFilter(filter);
        }
        Scan scan = builder.build();
        Row scanState = scan.getScanState(engine);
        StructType physical = ScanStateRow.getPhysicalDataReadSchema(engine, scanState);
        List<Map<String, Object>> out = new ArrayList<>();
        try (CloseableIterator<FilteredColumnarBatch> files = scan.getScanFiles(engine)) {
            while (files.hasNext()) {
                try (CloseableIterator<Row> fileRows = files.next().getRows()) {
                    while (fileRows.hasNext()) {
                        Row scanFile = fileRows.next();
                        FileStatus status = InternalScanFileUtils.getAddFileStatus(scanFile);
                        CloseableIterator<ColumnarBatch> physicalData = engine.getParquetHandler()
                            .readParquetFiles(single(status), physical, Optional.empty());
                        try (CloseableIterator<FilteredColumnarBatch> data =
                                 Scan.transformPhysicalData(engine, scanState, scanFile, physicalData)) {
                            while (data.hasNext()) {
                                try (CloseableIterator<Row> rows = data.next().getRows()) {
                                    while (rows.hasNext()) {
                                        Map<String, Object> row = toMap(rows.next());
                                        if ((runId == null || runId.equals(row.get("run_id")))
                                            && (appId == null || appId.equals(row.get("app_id")))) {
                                            out.add(row);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return out;
    }

    private static <T> CloseableIterator<T> single(T item) {
        return new CloseableIterator<>() {
            private boolean done;

            @Override
            public boolean hasNext() {
                return !done;
            }

            @Override
            public T next() {
                if (done) {
                    throw new NoSuchElementException();
                }
                done = true;
                return item;
            }

            @Override
            public void close() {
            }
        };
    }

    static Map<String, Object> toMap(Row row) {
        Map<String, Object> out = new HashMap<>();
        StructType schema = row.getSchema();
        for (int i = 0; i < schema.length(); i++) {
            StructField field = schema.at(i);
            out.put(field.getName(), row.isNullAt(i) ? null : value(row, i, field.getDataType()));
        }
        return out;
    }

    private static Object value(Row row, int i, DataType type) {
        if (type instanceof StringType) {
            return row.getString(i);
        } else if (type instanceof LongType) {
            return row.getLong(i);
        } else if (type instanceof IntegerType) {
            return row.getInt(i);
        } else if (type instanceof BooleanType) {
            return row.getBoolean(i);
        } else if (type instanceof TimestampType) {
            return Math.floorDiv(row.getLong(i), 1000L); // microseconds since the epoch -> ms
        } else if (type instanceof ArrayType) {
            ArrayValue array = row.getArray(i);
            ColumnVector elements = array.getElements();
            List<String> out = new ArrayList<>(array.getSize());
            for (int j = 0; j < array.getSize(); j++) {
                out.add(elements.isNullAt(j) ? null : elements.getString(j));
            }
            return out;
        } else if (type instanceof MapType) {
            MapValue map = row.getMap(i);
            Map<String, Long> out = new HashMap<>();
            for (int j = 0; j < map.getSize(); j++) {
                out.put(map.getKeys().getString(j), map.getValues().isNullAt(j) ? null : map.getValues().getLong(j));
            }
            return out;
        }
        return null; // a column the follower does not read
    }
}
