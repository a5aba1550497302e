import Calibration
import CommandLineSupport
import HardwareAbstraction
import Randomness
import Recording
import TestSupport
import Testing

@testable import plumb_cal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Issue 24, item 4: `plumb-cal allan` and `gyro` read a recording from its file in passes
/// (`RecordingLoader.open`, `RecordingFile`) instead of holding it. The figures must be those
/// of the recording in memory, bit for bit, on both formats, with gaps, across chunk boundaries;
/// a damaged or malformed file must fail with the same message.
@Suite struct StreamedRecordingTests {
  /// A path in a new scratch folder (removed when the test process exits).
  func temporaryPath(_ name: String) -> String { Scratch.folder("stream") + "/" + name }

  func writeFile(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
  }

  /// A still recording with a missed sample and a 0.3 s hole, as CSV text.
  func gappyCSV(sampleCount: Int = 30_000, seed: UInt64 = 11) -> [UInt8] {
    var simulation = StillSensorSimulation.seed000
    simulation.samplePeriodSeconds = 0.0099305
    simulation.startTemperatureCelsius = 20
    simulation.finalTemperatureCelsius = 35
    simulation.gyroBiasPerDegree = .init(1e-4, -2e-4, 5e-5)
    let whole = simulation.record(sampleCount: sampleCount, seed: seed)
    var text = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c\n"
    for i in 0..<whole.count where i != 4321 && !(20_000..<20_030).contains(i) {
      text += "\(whole.timeSeconds[i])"
      for axis in InertialAxis.allCases { text += ",\(whole.samples(axis)[i])" }
      text += ",\(whole.temperatureCelsius![i])\n"
    }
    return Array(text.utf8)
  }

  /// A `.plumbraw` of `sampleCount` samples at 1 kHz (seeded counts, jittered edges, a missed
  /// sample and a 50 ms hole), with the header of the simulated board's golden recording.
  func gappyPlumbRaw(at path: String, sampleCount: Int = 30_000) throws {
    let tests = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/")
    let golden = tests + "/PlumbRuntimeTests/Golden/simulated-5s.plumbraw"
    let header = try PlumbRawReader(contentsOf: golden).header
    let writer = try PlumbRawWriter(creating: path, header: header)
    var random = SeededGenerator(seed: 24)
    var walk = [0.0, 0.0, 0.0]
    for i in 0..<sampleCount where i != 777 && !(12_000..<12_050).contains(i) {
      var counts: [Int16] = []
      for c in 0..<3 {
        walk[c] += 0.05 * random.gaussian()
        counts.append(Int16(clamping: Int((200 * random.gaussian() + [0, 0, 8192][c]).rounded())))
      }
      counts.append(Int16(clamping: -3000 + i / 5))  // 17.6 °C of warm-up
      for c in 0..<3 {
        counts.append(Int16(clamping: Int((walk[c] + 9 * random.gaussian()).rounded())))
      }
      var bytes: [UInt8] = []
      for value in counts {
        bytes += [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
      }
      let edge = Int64(i) * 1_000_000 + Int64((20_000 * random.gaussian()).rounded())
      try writer.append(
        .sample(
          PlumbRawSample(
            timestamp: Timestamp(nanoseconds: 5_000_000_000 + edge),
            bytes: PlumbRawBurstBytes(bytes))))
    }
    try writer.close()
  }

  /// Why the recording at `path` cannot be read whole; `nil` when it can.
  func loadError(_ path: String) -> RecordingError? {
    do {
      _ = try RecordingLoader.standard.load(path: path)
      return nil
    } catch {
      return error
    }
  }

  /// The recording opened for passes, read `chunkSize` bytes at a time.
  func streamed(_ path: String, chunkSize: Int, skipDamaged: Bool = false) throws
    -> any SampleSource
  {
    let source = try RecordingLoader.standard(corruption: skipDamaged ? .skip : .fail).open(
      path: path)
    let file = try #require(source as? RecordingFile)
    file.chunkSize = chunkSize
    return file
  }

  /// Everything `plumb-cal allan` and `gyro` compute, from the file in passes and from the
  /// recording in memory (the functions `plumb-cal save` uses), compared bit for bit.
  func expectSameFigures(_ path: String, chunkSize: Int, skipDamaged: Bool = false) throws {
    let recording = try RecordingLoader.standard(corruption: skipDamaged ? .skip : .fail).load(
      path: path)
    let source = try streamed(path, chunkSize: chunkSize, skipDamaged: skipDamaged)
    var statistics = ChannelStatistics()
    let timing = try SampleTiming.measure(source) { statistics.add($0) }
    let timingInMemory = try SampleTiming.measure(recording)
    #expect(timing == timingInMemory)
    #expect(source.facts?.notes == recording.notes)
    var rest = RestWindowStatistics(timing: timing)
    var deviations = SquaredDeviations(statistics)
    var windows = TemperatureWindows(timing: timing, windowSeconds: 2)
    let streamedAnalysis = try AllanAnalysis.analyze(
      source, timing: timing, statistics: statistics, memoryBudgetBytes: 1 << 20
    ) { sample, index in
      rest.add(sample, index: index)
      deviations.add(sample)
      windows.add(sample, index: index)
    }
    let analysis = try AllanAnalysis.analyze(recording)
    #expect(streamedAnalysis.clusterSizes == analysis.clusterSizes)
    for axis in InertialAxis.allCases {
      #expect(streamedAnalysis.curves[axis] == analysis.curves[axis], "\(axis)")
      #expect(streamedAnalysis.readOffs[axis] == analysis.readOffs[axis], "\(axis)")
    }
    #expect(
      rest.thresholds() == RestDetectorThresholds.derive(from: recording, timing: analysis.timing))
    #expect(
      GyroBias.estimate(statistics: statistics, deviations: deviations, allan: streamedAnalysis)
        == GyroBias.estimate(recording, allan: analysis))
    let fit = try BiasTemperatureFit.fit(windows)
    let reference = try BiasTemperatureFit.fit(recording, timing: timing, windowSeconds: 2)
    #expect(fit.windowTemperatures == reference.windowTemperatures)
    #expect(fit.linear == reference.linear && fit.quadratic == reference.quadratic)
    let range = try #require(recording.temperatureCelsius)
    #expect(statistics.temperatureRange == range.min()!...range.max()!)
  }

  @Test func aCSVReadInPassesGivesTheFiguresOfTheRecordingInMemory() throws {
    let path = temporaryPath("gappy.csv")
    let bytes = gappyCSV()
    writeFile(bytes, to: path)
    // Chunks far smaller than the file (4.5 MB), some smaller than a line; and the default.
    #expect(bytes.count > 4 * RecordingBytes.chunkSize)
    for chunkSize in [97, 4096, RecordingBytes.chunkSize] {
      try expectSameFigures(path, chunkSize: chunkSize)
    }
  }

  @Test func aPlumbRawReadInPassesGivesTheFiguresOfTheRecordingInMemory() throws {
    let path = temporaryPath("gappy.plumbraw")
    try gappyPlumbRaw(at: path)
    // The header alone is longer than the smallest chunk: the window grows to hold it.
    for chunkSize in [64, 4096, RecordingBytes.chunkSize] {
      try expectSameFigures(path, chunkSize: chunkSize)
    }
  }

  /// Damage in the middle of a `.plumbraw`, past the first chunks: the same error (byte and
  /// record) as reading it whole; with --skip-damaged, the same samples, note and figures. A
  /// file cut in the middle of a record: the same note.
  @Test func aDamagedOrCutPlumbRawFailsOrReadsAsWhenHeld() throws {
    let path = temporaryPath("whole.plumbraw")
    let damaged = temporaryPath("damaged.plumbraw")
    let cut = temporaryPath("cut.plumbraw")
    try gappyPlumbRaw(at: path)
    var bytes = Scratch.contents(of: path)
    writeFile(Array(bytes[0..<(bytes.count - 20)]), to: cut)
    bytes[bytes.count * 2 / 3] ^= 0xFF
    writeFile(bytes, to: damaged)
    let expected = try #require(loadError(damaged))
    #expect(expected.kind == .malformed && expected.location?.contains("byte") == true)
    for chunkSize in [333, 4096] {
      let source = try streamed(damaged, chunkSize: chunkSize)
      #expect(throws: expected) { _ = try SampleTiming.measure(source) }
    }
    try expectSameFigures(damaged, chunkSize: 1000, skipDamaged: true)
    // The commands: 65 for the damage, 0 reading past it.
    let commands = CommandGroup(
      name: "plumb-cal", abstract: "test", subcommands: [allanCommand, gyroCommand])
    for command in ["allan", "gyro"] {
      #expect(commands.run([command, damaged]) == 65)
      #expect(commands.run([command, damaged, "--skip-damaged"]) == 0)
      #expect(commands.run([command, cut]) == 0)
    }
    try expectSameFigures(cut, chunkSize: 1000)
    #expect(try RecordingLoader.standard.load(path: cut).notes.count == 1)
  }

  /// A malformed row far into a CSV (past the first chunks): the same error, naming its line.
  @Test func aMalformedCSVRowFailsWithTheLineAsWhenHeld() throws {
    let path = temporaryPath("malformed.csv")
    var lines = String(decoding: gappyCSV(sampleCount: 12_000), as: UTF8.self)
      .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines[9_000] += "x"
    writeFile(Array(lines.joined(separator: "\n").utf8), to: path)
    let expected = try #require(loadError(path))
    #expect(expected.location == "line 9001")
    let source = try streamed(path, chunkSize: 4096)
    #expect(throws: expected) { _ = try SampleTiming.measure(source) }
  }

  /// The figures before streaming, pinned: main's `plumb-cal allan gappy.csv --table` and
  /// `plumb-cal gyro gappy.csv --window 2` (commit 6da587b, the recording held in memory) on
  /// `gappyCSV()`; the same text from the file read in passes of 4 KiB.
  @Test func theReportsAreThoseOfTheCommandsBeforeTheyStreamed() throws {
    let path = temporaryPath("gappy.csv")
    writeFile(gappyCSV(), to: path)
    let source = try streamed(path, chunkSize: 4096)
    var statistics = ChannelStatistics()
    let timing = try SampleTiming.measure(source) { statistics.add($0) }
    let table = try AllanAnalysis.analyze(source, timing: timing, statistics: statistics)
    #expect(allanTable(table) == StreamedRecordingTests.tableBeforeStreaming + "\n")
    var deviations = SquaredDeviations(statistics)
    var windows = TemperatureWindows(timing: timing, windowSeconds: 2)
    let gyro = try AllanAnalysis.analyze(
      source, timing: timing, statistics: statistics, axes: InertialSensor.gyroscope.axes
    ) { sample, index in
      deviations.add(sample)
      windows.add(sample, index: index)
    }
    let report = gyroReport(
      source: "gappy.csv", temperatureRange: statistics.temperatureRange, gyro,
      GyroBias.estimate(statistics: statistics, deviations: deviations, allan: gyro),
      try BiasTemperatureFit.fit(windows), nil)
    #expect(report == StreamedRecordingTests.gyroReportBeforeStreaming + "\n")
  }

  static let tableBeforeStreaming = """
    tau_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z
    0.0099305,0.0020020221006314207,0.0020115872847121614,0.0019905040852139957,0.030004065059898815,0.02982087962176473,0.029867671143113547
    0.019861,0.0014074389073442833,0.0014106663359821031,0.0014059907467338466,0.021222239372941393,0.02117915304763909,0.02104608156977532
    0.0297915,0.0011459712108073047,0.0011559206677034194,0.0011450115654262991,0.017307652708698173,0.01732099878732076,0.017173296419571556
    0.039722,0.000990198509169805,0.0010030241350712729,0.0009919391415980977,0.01497424875889354,0.015009218988312865,0.014885515582774414
    0.0496525,0.0008867522749344757,0.000897045376247437,0.0008888733999845337,0.013367943075532577,0.013416878249314323,0.01331771610345434
    0.059583,0.0008092384221676131,0.0008156243935718706,0.0008148338484227464,0.01217093579123014,0.012254475820757208,0.012178106402899675
    0.079444,0.0006991064275226929,0.0007007617059018679,0.0007074409403384994,0.010558036623625101,0.010658260905108748,0.010556257381577634
    0.099305,0.0006225569468988587,0.000625939347540889,0.0006312323787639747,0.009453924415325107,0.009556050630891166,0.009437792310859283
    0.1290965,0.0005421492794618032,0.0005506970240348703,0.000551422065745962,0.008267034306033568,0.00841680680121086,0.008277297611240263
    0.158888,0.0004865990349367458,0.0004973567424037033,0.0004977566276092399,0.007420207248800232,0.007543352689503489,0.007455283371313479
    0.19861,0.0004343035879719049,0.00044223427420566496,0.00044606915482102834,0.006597470509003417,0.006706733966987628,0.006608334219583202
    0.2482625,0.0003890306103470672,0.0003946013019075706,0.0003972129332332262,0.005883874221463635,0.006008022022146304,0.005878097049542707
    0.317776,0.0003461788456140917,0.0003502039509600386,0.00034624092910710006,0.005195908913931627,0.005380429780087814,0.00521326642664378
    0.39722,0.0003146563324605527,0.0003165710739058292,0.0003072889257604125,0.004626909980643433,0.004829728231132171,0.0047554135176193744
    0.496525,0.0002865702294220511,0.00028450628777345526,0.00027536602910285395,0.0040962015644926105,0.00426915110384093,0.0043236724697238976
    0.635552,0.00025741578604264443,0.0002546961835002543,0.0002449124480981702,0.0035742194518101024,0.0037583428321812094,0.003866539433617174
    0.79444,0.00022995972296711427,0.00022888079709954527,0.00021900709236540364,0.003170426888450773,0.0033599238707710355,0.0034893698934475373
    1.0029805,0.00020464653262326126,0.00020579180027221298,0.00019124985576182403,0.0028242543390526757,0.003044426332406153,0.003141138317521106
    1.2611735,0.00018243233555424897,0.00018536160106186666,0.00016667976522736304,0.002541182861919418,0.002742759017840075,0.002872265465090227
    1.58888,0.00016197246592158774,0.0001677671223927019,0.00014504632881933606,0.002338337661821852,0.002458669917271862,0.0026379782239918897
    1.9960305,0.0001422275780941929,0.00014837010577707025,0.00012965564388978308,0.0021651801911046643,0.002223397444846645,0.0024461219309138897
    2.5124165,0.00012577401274097632,0.00012879760882234854,0.000116429503236246,0.001957177196281435,0.0020114645381949054,0.0022156058445179424
    3.157899,0.00011634686029364912,0.0001093747676902384,0.00010435973510706446,0.001709961299423334,0.0018167290272677083,0.0020014488776404255
    3.9821305,0.00010612983772104414,9.369863912159339e-05,9.57962150907628e-05,0.0014622507306686538,0.0015967836709990708,0.001777237685125622
    5.0149025,9.673684559698874e-05,8.400733834259481e-05,8.858730828744686e-05,0.0012432703035891756,0.0013521499231557408,0.0015861583414781468
    6.3058675,8.698045009064796e-05,7.98744329323503e-05,8.483702440375633e-05,0.001080877077933304,0.0011667452756211414,0.0013789455535806838
    7.9444,7.935311830197822e-05,7.799049125175408e-05,8.082429994071664e-05,0.0009596669639666727,0.0010457893177048547,0.001223772615378675
    10.0000135,7.341071063258326e-05,7.627771590434339e-05,7.644360823083946e-05,0.0008600509373705966,0.0009606687832951228,0.001135450613150231
    12.591874,7.344303296090868e-05,7.994201580676803e-05,7.037102692743304e-05,0.00079983395373484,0.0008692996369781267,0.001047910352685385
    15.849078,7.692958736007518e-05,8.874688640418305e-05,6.677966665640584e-05,0.0007547602508942666,0.0008017542634432171,0.0008995005119173045
    19.9503745,8.171497084730451e-05,0.00010309484316712954,6.845990365930032e-05,0.0007353447764119624,0.0007494332282489775,0.0007731125743338647
    25.1142345,9.132816788659898e-05,0.00012309286745899777,7.412906668646923e-05,0.0006982497601171901,0.0006692966739215799,0.0006847856357601135
    """

  static let gyroReportBeforeStreaming = """
    plumb-cal gyro gappy.csv
      29969 samples, 297.61 s at 100.700 Hz
      2 gaps in the samples (31 samples missing, 0.1 % of the span; the first before line 4323, the longest 307.85 ms). No averaging window spans a gap; an Allan cluster counts when at most a tenth of its samples are missing
      temperature 20.00 … 25.87 °C

    Static bias                                   x            y            z
      bias (rad/s)                         1.316e-4    -9.828e-6    -1.199e-4
      bias (°/s)                           7.542e-3    -5.631e-4    -6.868e-3
      standard error (rad/s)               3.238e-5     4.377e-5     3.116e-5
      effective independent samples            3893         2235         4088
      naive σ/√n (rad/s)                   1.167e-5     1.195e-5     1.151e-5
      standard error = the Allan deviation extrapolated to the record length (297.61 s)

    Bias versus temperature: 148 windows of 1.99603 s, T_ref = 23.17 °C, bias = c0 + c1·(T − T_ref) + c2·(T − T_ref)²
                                                  x            y            z
      linear c1 (rad/s/°C)                 1.899e-4    -2.996e-4     4.395e-5
        R²                                   0.7846       0.9042       0.1735
        residual RMS (rad/s)               1.676e-4     1.642e-4     1.616e-4
      quadratic c1 (rad/s/°C)              1.835e-4    -2.929e-4     5.061e-5
        c2 (rad/s/°C²)                    -2.152e-5     2.256e-5     2.242e-5
        R²                                   0.8077       0.9160       0.2770
        residual RMS (rad/s)               1.583e-4     1.538e-4     1.511e-4
        F (quadratic term)                    17.43         20.3        20.76
      chosen                                 linear       linear       linear
      bias at T_ref c0 (rad/s)             1.293e-4    -9.624e-6    -1.214e-4
    """

  /// More intervals than the median's selection keeps (2²⁰): it counts the values that share
  /// the first interval's bits, level by level, and narrows the rest over further passes; the
  /// same median either way, for equal intervals, jittered ones, and a first interval unlike
  /// the others (a gap, so that the first pass's guess is wrong).
  @Test func theMedianOfMoreIntervalsThanFitIsExact() throws {
    let count = (1 << 20) + 5_000
    var random = SeededGenerator(seed: 3)
    let zeros = [Double](repeating: 0, count: count)
    for (jitter, firstGap, most) in [(0.0, 0.0, 3), (2e-6, 0.0, 5), (2e-6, 0.5, 5), (0, 0.5, 5)] {
      var time = [Double](repeating: 0, count: count)
      for i in 0..<count {
        time[i] = Double(i) * 1e-3 + jitter * random.gaussian() + (i > 0 ? firstGap : 0)
      }
      let recording = InertialRecording(
        source: "many.csv", timeSeconds: time, channels: [[Double]](repeating: zeros, count: 6),
        temperatureCelsius: nil)
      var passes = 0
      let counting = CountingPasses(recording: recording) { passes += 1 }
      let streamed = try SampleTiming.measure(counting)
      let inMemory = try SampleTiming.measure(recording)
      #expect(streamed == inMemory)
      // The median's passes and the one for the runs.
      #expect(passes >= 2 && passes <= most, "jitter \(jitter), gap \(firstGap): \(passes) passes")
    }
  }
}

/// A recording in memory that counts the passes made over it.
struct CountingPasses: SampleSource {
  let recording: InertialRecording
  let counted: () -> Void

  init(recording: InertialRecording, counted: @escaping () -> Void) {
    self.recording = recording
    self.counted = counted
  }

  var source: String { recording.source }
  var facts: RecordingFacts? { recording.facts }

  func forEachSample(_ body: (RecordingSample) -> Void) throws(RecordingError) {
    counted()
    try recording.forEachSample(body)
  }

  func location(ofSample index: Int, line: Int) -> String {
    recording.location(ofSample: index, line: line)
  }
}
