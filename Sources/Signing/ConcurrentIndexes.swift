import Foundation

/// Work over the indexes of a range on a few concurrent workers, results in the range's order: what
/// a batch does per document when the work is CPU-bound and the documents are independent.
package enum ConcurrentIndexes {
    /// `transform` of every index of `range`, on `workers` concurrent tasks (nil: one per core, at most
    /// eight, as a signing batch uses); each task takes every `workers`th index in turn, so
    /// at most `workers` transforms run at once (a batch of large attached documents does not read
    /// them all into memory together).
    /// - Returns: the results in the order of `range`.
    package static func map<Result: Sendable>(
        _ range: Range<Int>,
        workers: Int? = nil,
        _ transform: @escaping @Sendable (Int) async -> Result
    ) async -> [Result] {
        let workers = max(1, min(workers ?? BatchSigningPipeline.workerCount, range.count))
        guard workers > 1 else {
            var results: [Result] = []
            results.reserveCapacity(range.count)
            for index in range { results.append(await transform(index)) }
            return results
        }
        return await withTaskGroup(of: [(Int, Result)].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var made: [(Int, Result)] = []
                    for index in stride(from: range.lowerBound + worker, to: range.upperBound, by: workers) {
                        made.append((index, await transform(index)))
                    }
                    return made
                }
            }
            var results = [Result?](repeating: nil, count: range.count)
            for await made in group {
                for (index, result) in made { results[index - range.lowerBound] = result }
            }
            // Every index was given to exactly one worker, and every worker returned.
            return results.compactMap { $0 }
        }
    }
}
